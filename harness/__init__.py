"""euchre-harness: a gRPC referee, tournament runner and rating tool for Euchre bots."""

__version__ = "0.1.0"
