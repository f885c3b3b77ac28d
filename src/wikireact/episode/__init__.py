"""What every agent's episode shares: the door of a run, the context it keeps, approval, the audit trail, its resources, forks and the agent as a tool."""
