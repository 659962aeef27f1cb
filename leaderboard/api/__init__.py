"""The REST API (``/api/v1/``) of DESIGN.md's interface contract: thin views over services and selectors."""
