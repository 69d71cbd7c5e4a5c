/** How a command fails, for cli.ts to turn into a message and an exit status; thrown by every command and by the command line. */

/** Bad input to a command: one line and a hint at its --help on stderr, exit status 2. */
export class UsageError extends Error {}

/** A well-formed command that cannot be done (an unknown id): one line on stderr, exit status 2. */
export class CommandError extends Error {}

/** `--help` (or `-h`) among a command's arguments: its help on stdout, exit status 0, nothing done. */
export class HelpRequest extends Error {
  constructor(readonly help: string) {
    super('help requested')
  }
}
