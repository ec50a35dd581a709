"""``python -m kubesched`` — the same as the ``kubesched`` console script (:func:`kubesched.cli.main.main`)."""

from kubesched.cli.main import main

if __name__ == "__main__":
    main()
