// The dashboard's error: a request it refuses, or a page it cannot serve.
import { CadreError } from "../errors.ts";

/** A request the dashboard refuses, or a page it cannot serve; the message is shown to the person at the page. */
export class DashboardError extends CadreError {}
