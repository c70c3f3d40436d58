"""The trust and file layer: the one guarded reader, the one output-folder writer, signatures,
inert text.
"""
