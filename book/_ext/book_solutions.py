"""Solution dropdowns open when their title is clicked.

sphinx-exercise wraps "Exercise N.M (title)" in a solution's title in a link back to the
exercise, so a click on the blue text of a closed dropdown jumps up the page instead of
opening the solution (issue 15). The solution always follows its exercise in this book, so
the link is dropped and its text kept; the whole title then toggles the dropdown.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform


class UnlinkSolutionTitles(SphinxPostTransform):
    """Replace the reference inside every solution title by its children."""

    default_priority = 22  # after sphinx-exercise's ResolveTitlesInSolutions (21)

    def run(self):
        from sphinx_exercise.nodes import solution_node

        for sol in self.document.findall(solution_node):
            if not sol.children or not isinstance(sol.children[0], nodes.title):
                continue
            title = sol.children[0]
            for ref in list(title.findall(nodes.reference)):
                ref.replace_self(ref.children)


def setup(app):
    app.add_post_transform(UnlinkSolutionTitles)
