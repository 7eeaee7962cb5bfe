// The viewer's status line: what is shown, notes on the view asked for, why the plane cannot be shown, failed tiles.

/**
 * The status line in `element`, headed by `summary`. `retry()` reads the plane's tiles again: OpenLayers keeps a failed
 * tile failed, so once the host or archive is back they are read only on asking. Nothing shows until `ready()`.
 */
export class StatusLine {
  constructor(element, summary, retry) {
    this.element = element;
    this.summary = summary;
    this.retry = retry;
    this.ready_ = false;
    /** Notes on the view asked for (an archive replaced since the page opened). */
    this.notes = [];
    /** A colour-by asked for that the pyramid lacks, until another field is chosen. */
    this.fieldProblem = undefined;
    /** Layers the view asked for hides that the pyramid lacks (a link from another slide), until another view is asked for. */
    this.hideProblem = undefined;
    /** Notes on the plane shown (a plane asked for that the pyramid lacks), cleared by a switch. */
    this.planeNotes = [];
    /** Why the plane selected cannot be shown (its archive missing or unreadable), or undefined. */
    this.planeProblem = undefined;
    /** Tiles of the plane shown that failed (each one, of any plane, is in the page's `errors`). */
    this.failedTiles = 0;
    /** Why the last of them failed, when known. */
    this.lastFailure = undefined;
  }

  ready() {
    this.ready_ = true;
    this.show();
  }

  /** Adds a note once. */
  note(text) {
    if (this.notes.includes(text)) return;
    this.notes.push(text);
    this.show();
  }

  /** Says which colour-by asked for is lacking, or (undefined) that the one shown was chosen since. */
  fieldNote(text) {
    if (this.fieldProblem === text) return;
    this.fieldProblem = text;
    this.show();
  }

  /** Says which layers (ids) the view asked for hides that the pyramid lacks; none: that it names none such. */
  hideNote(ids) {
    const text = ids.length === 0 ? undefined : `no layer${ids.length > 1 ? 's' : ''} ${ids.map((id) => `"${id}"`).join(', ')} in this pyramid to hide: left out of the link`;
    if (this.hideProblem === text) return;
    this.hideProblem = text;
    this.show();
  }

  /** Adds a note on the plane shown once; a switch to another plane clears it. */
  planeNote(text) {
    if (this.planeNotes.includes(text)) return;
    this.planeNotes.push(text);
    this.show();
  }

  /** Another plane is asked for: the notes on the one before go (at once: notes on the new one may follow). */
  planeAsked() {
    this.planeNotes.length = 0;
    this.show();
  }

  /** Another plane's tiles are shown: their failures are counted anew. */
  planeShown() {
    this.failedTiles = 0;
    this.lastFailure = undefined;
    this.show();
  }

  /**
   * A tile of the plane shown failed, for `why` (undefined: not known). The count alone left a person no way to learn
   * why (an archive cut short, a host failing) but the page's `errors`, out of sight.
   */
  tileFailed(why) {
    this.failedTiles++;
    this.lastFailure = why;
    this.show();
  }

  show() {
    if (!this.ready_) return;
    const why = this.lastFailure === undefined ? '' : ` (the last: ${this.lastFailure})`;
    const failed = this.failedTiles > 0 ? [`${this.failedTiles} tile(s) failed to load${why}`] : [];
    const problem = this.planeProblem ? [this.planeProblem] : [];
    const asked = [this.fieldProblem, this.hideProblem].filter((t) => t !== undefined);
    const rest = [this.summary, ...this.notes, ...asked, ...this.planeNotes];
    const problems = [...problem, ...failed];
    // In parts: the panel folded to its title (a phone) still shows the problems, its other notes out of the way.
    const part = (className, text) => Object.assign(document.createElement('span'), { className, textContent: text });
    this.element.replaceChildren(part('rest', `${rest.join('; ')}${problems.length > 0 ? '; ' : ''}`));
    if (problems.length > 0) this.element.append(part('problem', problems.join('; ')));
    this.element.className = this.failedTiles > 0 || this.planeProblem ? 'error' : '';
    if (this.failedTiles > 0) {
      const button = Object.assign(document.createElement('button'), { id: 'retry', type: 'button', textContent: 'retry' });
      button.addEventListener('click', () => {
        this.failedTiles = 0;
        this.lastFailure = undefined;
        this.retry();
        this.show();
      });
      this.element.append(' ', button);
    }
  }
}

/**
 * What the status line says of a plane whose coarsest tiles (zoom `minZoom`) hold no feature. A built pyramid has
 * features: with one plane, or none found in any plane read yet, they may not be where the tiles template points; with
 * `dataElsewhere` (another plane's tiles held some), the template is sound and the plane holds none (a channel without
 * annotations), which is all there is to say: that case asked whether the template pointed where the tiles are, right
 * after the plane before had shown its cells from the same template.
 */
export function emptyPlaneNote(dims, plane, minZoom, dataElsewhere) {
  const name = dims.map((d) => `${d}=${plane[d]}`).join(', ');
  if (dataElsewhere) return `no features on plane ${name}: its tiles are empty (other planes hold the data)`;
  const which = dims.length > 0 ? ` (${name}: it may hold none, another plane the data)` : '';
  return `no features in the tiles of zoom ${minZoom} of this plane${which}: every one empty or missing (does the tiles template point where the tiles are?)`;
}
