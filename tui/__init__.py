"""glassgrad's terminal app (Textual) and the glassgrad command."""
