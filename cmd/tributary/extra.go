package main

// extraCommands returns the subcommands contributed by later parts of the
// project (worker, dev, plugin mode, bench); each part appends its own.
func extraCommands() []command {
	return []command{
		benchCommand(),
		connectorsCommand(),
		devCommand(),
		pluginCommand(),
		workerCommand(),
	}
}
