"""The demo bank `scripts/run` starts with (`manage.py seed_demo`): the top of the import graph,
since it drives every domain app through its services."""
