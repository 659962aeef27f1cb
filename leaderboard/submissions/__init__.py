"""Submissions, their asynchronous scoring, per-participant defense state and the leaderboards."""
