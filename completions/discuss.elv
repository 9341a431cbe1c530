
set edit:completion:arg-completer[discuss] = { |@words|
    var index = (count $words)
    set index = (- $index 1)

    put (env _CLAP_IFS="\n" _CLAP_COMPLETE_INDEX=(to-string $index) DISCUSS_COMPLETE="elvish" discuss -- $@words) | to-lines
}

