"""What the official ``kaggle`` command line needs beyond the site's services: its two-step uploads and the
descriptions it gives submissions (the endpoints themselves are ``leaderboard.api.kaggle``)."""
