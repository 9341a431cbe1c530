complete --keep-order --exclusive --command discuss --arguments "(DISCUSS_COMPLETE=fish discuss -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
