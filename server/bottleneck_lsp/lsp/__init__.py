"""The language server: pygls features and commands; jobs and analysis do the work."""
