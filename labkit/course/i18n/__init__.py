"""Translations of the course: one English source, catalogs beside it (``labs/i18n/<lang>/``)."""
