"""What every widget may use: theme, layout helpers, guards, plain text, a figures table."""
