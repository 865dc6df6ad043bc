// A stand-in for Crush's shell, for scripts/e2e/crush-shell.sh: Crush runs the model's bash
// calls in mvdan.cc/sh's interpreter (its internal/shell), each call starting in the directory
// the previous one ended in (it keeps the runner's Dir). Usage: crush_shell DIR COMMAND...;
// prints `status=N cwd=DIR` after each command.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

func main() {
	dir := os.Args[1]
	for _, command := range os.Args[2:] {
		file, err := syntax.NewParser().Parse(strings.NewReader(command), "")
		if err != nil {
			fmt.Println("parse error:", err)
			os.Exit(2)
		}
		r, err := interp.New(interp.StdIO(nil, os.Stdout, os.Stderr), interp.Dir(dir))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		err = r.Run(context.Background(), file)
		code := 0
		if st, ok := interp.IsExitStatus(err); ok {
			code = int(st)
		} else if err != nil {
			fmt.Println("error:", err)
			code = -1
		}
		dir = r.Dir
		fmt.Printf("status=%d cwd=%s\n", code, dir)
	}
}
