"""What every suite is made of: a check's declaration and id, a project's own rules,
where the rule book is, how a check judges, and the ``--osf-...`` options of a run."""
