/** No customer with this id: the admin API answers 404 naming it, the CLI names the command that lists them. */
export class CustomerNotFoundError extends Error {
  constructor(readonly id: string) {
    super(`No customer with id ${id}`)
    this.name = 'CustomerNotFoundError'
  }
}
