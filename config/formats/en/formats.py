# "26 Nov 2026, 19:39" rather than "Nov. 26, 2026, 7:39 p.m.": a 24-hour clock, as staff
# read the API's timestamps, in a third less width.
DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
