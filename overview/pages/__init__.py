"""What people see and do, one module per page: views, their reads and forms. May import
every lower layer of overview and packages; nothing below imports it."""
