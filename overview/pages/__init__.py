"""What people see on the overview: the updates that need a person, one compact line per
update, and the words of a verdict. May import overview's lower modules and packages."""
