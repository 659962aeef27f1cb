"""Starting the site's processes on one machine (``stack.processes``)."""
