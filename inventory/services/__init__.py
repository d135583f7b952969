"""Services write. Every HTML form, API view, command and task calls these."""
