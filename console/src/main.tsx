import 'uplot/dist/uPlot.min.css'
import './console.css'
import { render } from 'preact'
import { App } from './app.js'
import { consumeTokenFragment } from './session.js'

// First: a token in the address leaves the address bar before anything else runs or renders.
consumeTokenFragment()
render(<App />, document.getElementById('app')!)
