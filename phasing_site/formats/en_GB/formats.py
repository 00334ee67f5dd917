"""Django's British English formats, with the time zone on every time shown (the admin's
lists and read-only fields): archive admins work across time zones and the data is in UTC."""

DATETIME_FORMAT = "j M Y, H:i T"
SHORT_DATETIME_FORMAT = "d/m/Y H:i T"
