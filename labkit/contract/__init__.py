"""The contract: how a tool is declared, the contract's enums, the Evidence Contract."""
