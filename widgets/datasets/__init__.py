"""Fields that describe a dataset's columns: roles, text formats, trades of quotes, its schema line."""
