"""The targets panel: its tree, lights, checks and the dialogs that add or edit a target."""
