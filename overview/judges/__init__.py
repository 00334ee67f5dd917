"""The judges of an update's evidence (Ubuntu's rule, the sequential test, exposure); imports
evidence and models, never the controller or pages."""
