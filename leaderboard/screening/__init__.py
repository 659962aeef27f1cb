"""The sybil screen in the site: sign-up traces, per-competition screen settings, suspected multi-account
clusters, held submissions and the host's decisions on them (``docs/sybil_screen.md``, "In the site")."""
