"""The audit views, built from a journal: the export document, redaction, the ledger,
the approval evidence chain, and the TTY session picker."""
