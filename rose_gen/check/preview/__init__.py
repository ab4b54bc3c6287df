"""``rose-gen preview``: contact sheets of a release, per subset, and an HTML index.

Only the release's rows and images are read (never the generator's internals), so the
sheets show what a model is given. Modules: :mod:`.scenes` (rows -> scene views),
:mod:`.sheet` (pixels -> a sheet), :mod:`.index` (the HTML page), :mod:`.build` (files).
"""
