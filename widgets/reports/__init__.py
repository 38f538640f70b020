"""The report gallery: its cards, experiment rows, and the narrated demo's cards and dialog."""
