"""The fake desktop relay (SPEC D11-D18): passes, outbox and bounded completion."""
