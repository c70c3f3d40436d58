"""Takes all the memory it can get, touching every page."""

hog = []
while True:
    hog.append(b"x" * (64 * 1024 * 1024))
