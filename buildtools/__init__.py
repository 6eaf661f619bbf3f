"""Build stages of Omoide, run inside the project virtualenv by build.py."""
