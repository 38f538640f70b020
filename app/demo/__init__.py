"""Demo mode and the narrated demo: the presenter, stored runs replayed, playlists."""
