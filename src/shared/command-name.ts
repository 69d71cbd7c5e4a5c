/**
 * How messages and the docs name the command line: its fast form from the project directory
 * (`npx animal-store` may go to the npm registry). The start banner adds a config file's option.
 */
export const CLI = 'node dist/cli.js'
