import { type ComponentChildren, createContext } from 'preact'
import { useContext, useLayoutEffect, useMemo, useRef } from 'preact/hooks'

/**
 * The loads of the page shown that have not answered yet. Marks the page's element in the commit
 * that changes them (a layout effect runs in the same task as the commit): nothing reading the page
 * between two tasks sees the mark disagree with what is drawn.
 */
class LoadsInFlight {
  private readonly pending = new Set<object>()
  private element: HTMLElement | null = null

  attach(element: HTMLElement | null): void {
    this.element = element
    this.mark()
  }

  set(load: object, loading: boolean): void {
    if (loading) this.pending.add(load)
    else this.pending.delete(load)
    this.mark()
  }

  private mark(): void {
    this.element?.toggleAttribute('data-loaded', this.pending.size === 0)
  }
}

const PageLoads = createContext<LoadsInFlight | null>(null)

/**
 * The page shown, marked for what drives the console (its browser tests, the screenshot script):
 * data-page names the route, data-address the address it is drawn for (`#/orders?status=placed`),
 * and data-loaded is there once every load of the page (useLoad) has answered for that address. A
 * page still showing the last address's rows while the next ones load has the new address and no
 * data-loaded, so `[data-address="…"][data-loaded]` is never met by the page before.
 */
export function PageShown({ page, address, children }: { page: string; address: string; children: ComponentChildren }) {
  const loads = useMemo(() => new LoadsInFlight(), [])
  const element = useRef<HTMLDivElement>(null)
  useLayoutEffect(() => loads.attach(element.current))
  return (
    <div class="page" data-page={page} data-address={address} ref={element}>
      <PageLoads.Provider value={loads}>{children}</PageLoads.Provider>
    </div>
  )
}

/** Tells the page shown whether this load is in flight (nothing outside a page); gone with its component. */
export function useLoadingMark(loading: boolean): void {
  const loads = useContext(PageLoads)
  const self = useRef({}).current
  useLayoutEffect(() => loads?.set(self, loading), [loads, loading])
  useLayoutEffect(() => () => loads?.set(self, false), [loads])
}
