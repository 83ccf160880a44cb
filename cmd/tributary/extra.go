package main

// extraCommands returns the subcommands contributed by later parts of the
// project (worker, dev, the connectors CLI); each part appends its own.
func extraCommands() []command {
	return []command{
		connectorsCommand(),
		devCommand(),
		healthcheckCommand(),
		mirrorCommand(),
		workerCommand(),
	}
}
