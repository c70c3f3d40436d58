"""Where jobs run side by side: the local pool."""
