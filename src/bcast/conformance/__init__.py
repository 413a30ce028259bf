"""Conformance: the matrix of rules x installed runtimes, its page, and the drift check of the
deviation records against the installed runtimes."""
