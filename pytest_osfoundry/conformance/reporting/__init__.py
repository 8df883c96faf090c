"""The end of a run and its reports, for every suite: how the run ended and the checks
it never ran, the results, the files written (JSON, Markdown, baseline, JUnit) and the
baseline a team gates on."""
