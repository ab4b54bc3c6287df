"""``rose-human``: a local page for human baselines (session, server, static page)."""
