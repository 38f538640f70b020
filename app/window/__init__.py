"""The main window and its controllers: one per tab or job, composed and wired by ``main_window``."""
