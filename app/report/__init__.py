"""The run report: HTML, PDF, its charts and tables, and the Export chart dialog."""
