"""Plan mode and todos (SPEC §4): the plan object, the todo list, and the plan's states."""
