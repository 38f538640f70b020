"""The results catalog and what reads it: stored runs, their figures, history and exports."""
