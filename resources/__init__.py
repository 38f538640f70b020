"""Tickbench's shipped resources: published figures (reference/), scenario presets and playlists
(scenarios/), icons. A package only so that a wheel carries them; ``workloads.paths`` finds them."""
