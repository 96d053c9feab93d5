package main

import "flag"

// parseInterspersed parses args like fs.Parse, but accepts flags after the
// positional arguments too (`check FILE --connect` as `check --connect
// FILE`): the flag package stops at the first argument that is not a
// flag, and then reports usage for a command line any other tool reads.
// It returns the positional arguments; after "--" every argument is one.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
