"""Date formats of the back office (FORMAT_MODULE_PATH): shorter than Django's English ones, so
a list's dates fit its column (docs/back-office.md, "Lists that fit 1400 px")."""
