"""File → Import data…: the import dialogs and the background job that reads the file."""
